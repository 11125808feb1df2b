/** Every refusal the service can give is one of these: a status, a stable code and a sentence. */
export class DomainError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    detail: string,
    readonly extra: Record<string, unknown> = {},
  ) {
    super(detail);
    this.name = new.target.name;
  }
}

export interface FieldError {
  field: string;
  code: string;
  message: string;
}

export interface Dependent {
  resource: string;
  id: number;
}

export class NotFound extends DomainError {
  constructor(resource: string, id: number) {
    super(404, 'not_found', `${resource}/${id} does not exist`);
  }
}

export class Deleted extends DomainError {
  constructor(resource: string, id: number) {
    super(404, 'deleted', `${resource}/${id} was deleted; its history stays readable`);
  }
}

export class Conflict extends DomainError {
  constructor(detail: string) {
    super(409, 'conflict', detail);
  }
}

export class InUse extends DomainError {
  constructor(resource: string, id: number, dependents: Dependent[]) {
    super(
      409,
      'in_use',
      `${resource}/${id} is still referenced by ${dependents.length} entr${dependents.length === 1 ? 'y' : 'ies'}`,
      {
        dependents,
      },
    );
  }
}

export class DeleteGuarded extends DomainError {
  constructor(resource: string, id: number, why: string) {
    super(409, 'delete_guarded', `${resource}/${id} cannot be deleted: ${why}`);
  }
}

export class PreconditionFailed extends DomainError {
  constructor(expected: string, actual: number) {
    super(412, 'precondition_failed', `If-Match ${expected} does not match the current version "${actual}"`);
  }
}

export class ValidationFailed extends DomainError {
  constructor(readonly errors: FieldError[]) {
    super(422, 'validation_failed', errors.map((e) => `${e.field}: ${e.message}`).join('; '), { errors });
  }
}

export const fieldError = (field: string, code: string, message: string) =>
  new ValidationFailed([{ field, code, message }]);

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

/** The entry that holds a unique value or an id, so that a client can change that entry instead. */
export interface Holder {
  resource: string;
  id: number;
  /** The unique key's fields, or `["id"]` for a taken id. */
  fields: string[];
}

export class Conflict extends DomainError {
  constructor(detail: string, holder?: Holder) {
    super(409, 'conflict', detail, holder ? { conflict: holder } : {});
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
  constructor(expected: readonly number[], actual: number) {
    const tags = expected.map((version) => `"${version}"`).join(', ');
    const asked =
      expected.length > 0 ? `If-Match ${tags} does not match` : 'If-Match names no version of this entry, not';
    super(412, 'precondition_failed', `${asked} the current version "${actual}"`);
  }
}

/** A 422 lists at most this many problems; `error_count` gives the total when there are more. */
export const MAX_LISTED_ERRORS = 100;
const MAX_DETAILED_ERRORS = 5;

export class ValidationFailed extends DomainError {
  readonly errors: FieldError[];

  /**
   * `listAll`: every problem is listed (an import's dry run is read for all of them). `unlisted`:
   * problems counted, not collected (a body of thousands of unknown names).
   */
  constructor(errors: FieldError[], options: { listAll?: boolean; unlisted?: number } = {}) {
    const listed = options.listAll ? errors : errors.slice(0, MAX_LISTED_ERRORS);
    const total = errors.length + (options.unlisted ?? 0);
    const shown = errors.slice(0, MAX_DETAILED_ERRORS).map((e) => `${e.field}: ${e.message}`);
    if (total > MAX_DETAILED_ERRORS) shown.push(`… ${total} problems in all`);
    const extra = listed.length < total ? { errors: listed, error_count: total } : { errors: listed };
    super(422, 'validation_failed', shown.join('; '), extra);
    this.errors = listed;
  }
}

export const fieldError = (field: string, code: string, message: string) =>
  new ValidationFailed([{ field, code, message }]);

/** Undo steps of tentative changes, run backwards by `rollback`. */
export class Journal {
  private readonly steps: (() => void)[] = [];

  record(step: () => void): void {
    this.steps.push(step);
  }

  /** Where the journal is now, to undo only what comes after it. */
  mark(): number {
    return this.steps.length;
  }

  rollback(to = 0): void {
    for (let i = this.steps.length - 1; i >= to; i--) this.steps[i]();
    this.steps.length = to;
  }
}

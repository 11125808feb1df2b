import type { CheckedEntry, DecideRules } from '../domain/decide.js';

/** The rules the wings add to every write, as one: each checks every entry, new ids start past every floor. */
export class AddedRules implements DecideRules {
  private readonly added: DecideRules[] = [];

  add(rules: DecideRules): void {
    this.added.push(rules);
  }

  check(entry: CheckedEntry): void {
    for (const rules of this.added) rules.check?.(entry);
  }

  firstId(resource: string): number {
    return Math.max(1, ...this.added.map((rules) => rules.firstId?.(resource) ?? 1));
  }
}

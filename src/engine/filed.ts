/**
 * Items filed under keys (an operation and a resource) and, within a key, under the values one field
 * must hold for the item to apply, or under none. Finding the items that may apply to an entry costs
 * a few map look-ups whatever the number of items: the approval policies that may hold a write are
 * found this way, not by testing each one (bench/approvals.ts, the `check` row: 1,000 policies).
 */

type Values = Record<string, unknown> | undefined;

interface Drawer<T> {
  /** Items filed under no value: always candidates. */
  any: T[];
  /** field → the JSON of a value → the items that need that value there. */
  byField: Map<string, Map<string, T[]>>;
}

/** A value as a drawer's label: its JSON (a missing field or side reads as null). */
const label = (value: unknown): string => JSON.stringify(value ?? null);

export class Filed<T> {
  private readonly drawers = new Map<string, Drawer<T>>();

  /** Files `item` under `key`, and under `on`: the values its `field` must hold (one of them) for it to apply. */
  add(key: string, item: T, on?: { field: string; values: readonly unknown[] }): void {
    let drawer = this.drawers.get(key);
    if (!drawer) {
      drawer = { any: [], byField: new Map() };
      this.drawers.set(key, drawer);
    }
    if (!on) {
      drawer.any.push(item);
      return;
    }
    let byValue = drawer.byField.get(on.field);
    if (!byValue) {
      byValue = new Map();
      drawer.byField.set(on.field, byValue);
    }
    for (const value of new Set(on.values.map(label))) {
      const items = byValue.get(value);
      if (items) items.push(item);
      else byValue.set(value, [item]);
    }
  }

  /** Whether anything is filed under `key`. */
  has(key: string): boolean {
    return this.drawers.has(key);
  }

  /**
   * Adds to `into` the items under `key` that may apply to an entry seen from `sides` (before and
   * after a change): those filed under no value, and those whose field holds one of their values on
   * some side. The caller still tests each one.
   */
  candidates(key: string, sides: readonly Values[], into: Set<T>): void {
    const drawer = this.drawers.get(key);
    if (!drawer) return;
    for (const item of drawer.any) into.add(item);
    for (const [field, byValue] of drawer.byField) {
      for (const side of sides) {
        const items = byValue.get(label(side?.[field]));
        if (items) for (const item of items) into.add(item);
      }
    }
  }
}

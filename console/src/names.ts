import { useEffect, useState } from 'preact/hooks';
import { entriesPath, request } from './api.js';
import { LABELS } from './references.js';

/**
 * Names where ids stand for entries: an entry's name as it was at a position of the log, read from
 * the entry at that moment (`?at=`), or just before it when the entry was deleted there (its last
 * name). Asked once per entry and position, a few at a time.
 */

const known = new Map<string, Promise<string | null>>();
const waiting: (() => void)[] = [];
let running = 0;

/** At most four names asked at once: a page of fifty changes never floods the service. */
async function inTurn<T>(work: () => Promise<T>): Promise<T> {
  if (running >= 4) await new Promise<void>((resolve) => waiting.push(resolve));
  running++;
  try {
    return await work();
  } finally {
    running--;
    waiting.shift()?.();
  }
}

async function labelAt(resource: string, id: number, position: number): Promise<string | null> {
  const reply = await request(`${entriesPath(resource)}/${id}?at=${position}`).catch(() => undefined);
  if (!reply?.ok) return null;
  const { item } = (await reply.json()) as { item: Record<string, unknown> };
  const label = (LABELS[resource] ?? []).map((field) => item[field]).find((v) => typeof v === 'string' && v !== '');
  return typeof label === 'string' ? label : null;
}

/** The entry's name at `position`, or just before it (deleted there); null if it had none. */
export function nameAt(resource: string, id: number, position: number): Promise<string | null> {
  const key = `${resource}/${id}@${position}`;
  if (!known.has(key)) {
    known.set(
      key,
      inTurn(async () => (await labelAt(resource, id, position)) ?? (await labelAt(resource, id, position - 1))),
    );
  }
  return known.get(key)!;
}

/** The entry's name at `position` once known (undefined until then, or when it has none). */
export function useName(resource: string, id: number, position: number): string | undefined {
  const [name, setName] = useState<string>();
  useEffect(() => {
    if (!LABELS[resource] || position < 1) return;
    let current = true;
    nameAt(resource, id, position).then((found) => current && setName(found ?? undefined));
    return () => {
      current = false;
    };
  }, [resource, id, position]);
  return name;
}

import { type Change, headers } from './api.js';

/**
 * The live change feed (`/fr/api/changes/stream`), read with fetch rather than EventSource so that
 * the bearer token goes in a header, never in the URL. On a break it reconnects after the last
 * position it had, so that nothing is missed or shown twice.
 */
export function follow(path: string, after: number, onChange: (change: Change) => void): () => void {
  const controller = new AbortController();
  let last = after;
  let stopped = false;
  const run = async () => {
    while (!stopped) {
      try {
        const response = await fetch(`${path}${path.includes('?') ? '&' : '?'}after=${last}`, {
          headers: headers({ Accept: 'text/event-stream' }),
          signal: controller.signal,
        });
        if (!response.ok || !response.body) throw new Error(`the feed answered ${response.status}`);
        const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
        let buffer = '';
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          buffer += value;
          let end = buffer.indexOf('\n\n');
          while (end >= 0) {
            const block = buffer.slice(0, end);
            buffer = buffer.slice(end + 2);
            const data = block
              .split('\n')
              .filter((line) => line.startsWith('data:'))
              .map((line) => line.slice(5).trimStart())
              .join('\n');
            if (data) {
              const change = JSON.parse(data) as Change;
              last = change.position;
              onChange(change);
            }
            end = buffer.indexOf('\n\n');
          }
        }
      } catch {
        if (stopped) return;
      }
      if (!stopped) await new Promise((resolve) => setTimeout(resolve, 1000));
    }
  };
  void run();
  return () => {
    stopped = true;
    controller.abort();
  };
}

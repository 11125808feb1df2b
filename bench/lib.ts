/** Runs `total` calls of `call` with `concurrency` in flight; returns requests/s and latency percentiles in ms. */
export async function measure(name: string, total: number, concurrency: number, call: (i: number) => Promise<void>) {
  const latencies: number[] = [];
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < total) {
        const i = next++;
        const t = performance.now();
        await call(i);
        latencies.push(performance.now() - t);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  const pct = (p: number) =>
    latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))].toFixed(2);
  console.log(
    `${name.padEnd(28)} ${String(total).padStart(6)} req  ${(total / seconds).toFixed(0).padStart(7)} req/s  p50 ${pct(50).padStart(7)} ms  p99 ${pct(99).padStart(7)} ms`,
  );
}

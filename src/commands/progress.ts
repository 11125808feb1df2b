/**
 * Progress on stderr for long runs: a bar redrawn in place on a terminal, a line every tenth of the
 * way otherwise (a log file gets ten lines, not a hundred thousand). stdout stays the command's output.
 */
export class Progress {
  private shownTenth = -1;
  private lastDraw = 0;

  constructor(
    private readonly label: string,
    private readonly out: NodeJS.WriteStream = process.stderr,
  ) {}

  update(done: number, total: number): void {
    const fraction = total === 0 ? 1 : done / total;
    if (this.out.isTTY) {
      const now = Date.now();
      if (now - this.lastDraw < 100 && done < total) return;
      this.lastDraw = now;
      const width = 30;
      const filled = Math.round(fraction * width);
      const bar = `${'#'.repeat(filled)}${' '.repeat(width - filled)}`;
      this.out.write(`\r${this.label} [${bar}] ${Math.round(fraction * 100)}% ${done}/${total}`);
      if (done >= total) this.out.write('\n');
      return;
    }
    const tenth = Math.floor(fraction * 10);
    if (tenth === this.shownTenth) return;
    this.shownTenth = tenth;
    this.out.write(`${this.label}: ${done}/${total} (${tenth * 10}%)\n`);
  }

  /** A step without a count. */
  note(text: string): void {
    this.out.write(`${this.label}: ${text}\n`);
  }
}

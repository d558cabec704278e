// Thin wrappers over the quiver CLI.
import { spawnSync } from 'node:child_process';
import { parseJsonLines } from './values.mjs';

const MAX_OUTPUT = 1 << 30;

export class Quiver {
  constructor(binary) { this.binary = binary; }

  /** Runs quiver; returns { status, stdout, stderr } (never throws on exit status). */
  run(args, { input } = {}) {
    const r = spawnSync(this.binary, args, { input, maxBuffer: MAX_OUTPUT, encoding: 'utf8' });
    if (r.error) throw new Error(`cannot run ${this.binary} ${args.join(' ')}: ${r.error.message}`);
    return { status: r.status, signal: r.signal, stdout: r.stdout, stderr: r.stderr };
  }

  /** Runs quiver and throws with its stderr unless it exits 0. */
  ok(args) {
    const r = this.run(args);
    if (r.status !== 0) {
      throw new Error(`quiver ${args.join(' ')} exited ${r.status ?? r.signal}: ${r.stderr.trim()}`);
    }
    return r;
  }

  /** `quiver convert IN OUT --to FORMAT --compression CODEC [extra...]`. */
  convert(input, output, { to, compression, extra = [] }) {
    return this.ok(['convert', input, output, '--to', to, '--compression', compression, ...extra]);
  }

  /** Every row of FILE as parsed JSON objects (int64 exact). */
  rows(file) {
    return parseJsonLines(this.ok(['cat', file, '--format', 'jsonl']).stdout);
  }
}

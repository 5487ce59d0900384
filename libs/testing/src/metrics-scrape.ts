import { spawnSync } from 'node:child_process';

/** One sample line of the exposition: `name{label="v",…} value`. */
export interface MetricSample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface MetricsScrape {
  text: string;
  samples: MetricSample[];
  /** Metric family names declared by `# TYPE` lines. */
  names(): string[];
  /** The sum of the samples named `name` whose labels include `labels`; undefined when none matches. */
  value(name: string, labels?: Record<string, string>): number | undefined;
}

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+\d+)?$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

/**
 * GETs a `/metrics` URL and checks the exposition with Prometheus's own parser and linter,
 * `promtool check metrics` (Debian's `prometheus` package; `tools/ci/services.sh install obstools`):
 * any finding fails. The samples of the (thus valid) text are then read line by line for assertions;
 * a histogram's observation count is its `<name>_count` sample.
 */
export async function scrapeMetrics(url: string): Promise<MetricsScrape> {
  const res = await fetch(url);
  if (res.status !== 200) throw new Error(`GET ${url} answered ${res.status}`);
  if (!/^text\/plain; version=0\.0\.4/.test(res.headers.get('content-type') ?? ''))
    throw new Error(`GET ${url} served ${res.headers.get('content-type')}`);
  const text = await res.text();
  const promtool = spawnSync(process.env.MANGO_PROMTOOL_BIN ?? 'promtool', ['check', 'metrics'], {
    input: text,
    encoding: 'utf8',
  });
  if (promtool.error) throw promtool.error;
  if (promtool.status !== 0 || promtool.stdout.trim() || promtool.stderr.trim())
    throw new Error(
      `promtool check metrics (exit ${promtool.status}):\n${promtool.stdout}${promtool.stderr}`,
    );
  const samples: MetricSample[] = [];
  const names: string[] = [];
  for (const line of text.split('\n')) {
    if (line.startsWith('# TYPE ')) names.push(line.split(' ')[2]!);
    if (!line || line.startsWith('#')) continue;
    const m = SAMPLE.exec(line);
    if (!m) throw new Error(`unreadable sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(LABEL)) labels[l[1]!] = JSON.parse(`"${l[2]}"`) as string;
    samples.push({ name: m[1]!, labels, value: Number(m[3]) });
  }
  return {
    text,
    samples,
    names: () => names,
    value: (name, labels = {}) => {
      const hits = samples.filter(
        (s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v),
      );
      return hits.length ? hits.reduce((n, s) => n + s.value, 0) : undefined;
    },
  };
}

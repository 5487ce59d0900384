import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse, parseAllDocuments, stringify } from 'yaml';

/**
 * The alert rules and the dashboard shipped with the Helm chart (deployments/helm/mango/files/observability), checked by Prometheus's own
 * promtool (Debian's package): the rules parse, each alert fires on the series that mean trouble and stays
 * quiet on healthy ones (promtool unit tests), every query names a metric Mango exports, and every alert
 * links a runbook section that exists in docs/operations.md.
 */
const ROOT = join(__dirname, '../..');
const DIR = join(ROOT, 'deployments/helm/mango/files/observability');
const promtool = process.env.MANGO_PROMTOOL_BIN ?? 'promtool';
const helm = process.env.MANGO_HELM_BIN ?? 'helm';

const rules = parse(readFileSync(join(DIR, 'alerts.yaml'), 'utf8')) as {
  groups: Array<{ rules: Array<{ alert: string; expr: string; annotations: { runbook: string } }> }>;
};
const alerts = rules.groups.flatMap((g) => g.rules);
const dashboard = JSON.parse(readFileSync(join(DIR, 'dashboard.json'), 'utf8')) as {
  panels: Array<{ title: string; targets: Array<{ expr: string }> }>;
};
const dashboardExprs = dashboard.panels.flatMap((p) =>
  p.targets.map((t) => ({ title: p.title, expr: t.expr })),
);

/** Every `mango_…` name a query uses, without the histogram series suffixes. */
function metricNames(expr: string): string[] {
  return [...expr.matchAll(/\bmango_[a-z_]+\b/g)].map((m) => m[0].replace(/_(bucket|count|sum)$/, ''));
}

/** Quoted metric names in the product's TypeScript sources (where every Mango metric is declared). */
function declaredMetricNames(): Set<string> {
  const names = new Set<string>();
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir)) {
      if (entry === 'node_modules' || entry.startsWith('.')) continue;
      const path = join(dir, entry);
      if (statSync(path).isDirectory()) walk(path);
      else if (/\.ts$/.test(entry) && !/\.(spec|int-spec|e2e-spec)\.ts$/.test(entry))
        for (const m of readFileSync(path, 'utf8').matchAll(/'(mango_[a-z_]+)'/g)) names.add(m[1]!);
    }
  };
  walk(join(ROOT, 'apps'));
  walk(join(ROOT, 'libs'));
  return names;
}

function slug(heading: string): string {
  return heading
    .toLowerCase()
    .replace(/[^a-z0-9 -]/g, '')
    .replace(/ /g, '-');
}

describe('alert rules and dashboard (promtool)', () => {
  it('the rules parse (promtool check rules)', () => {
    expect(
      execFileSync(promtool, ['check', 'rules', join(DIR, 'alerts.yaml')], { encoding: 'utf8' }),
    ).toContain(`SUCCESS: ${alerts.length} rules found`);
  });

  it('each alert fires on trouble and stays quiet when healthy (promtool test rules), and every alert is tested', () => {
    const out = execFileSync(promtool, ['test', 'rules', 'alerts.test.yaml'], { cwd: DIR, encoding: 'utf8' });
    expect(out).toContain('SUCCESS');
    const tested = readFileSync(join(DIR, 'alerts.test.yaml'), 'utf8');
    for (const a of alerts) expect(tested).toContain(`alertname: ${a.alert}`);
  });

  it('every dashboard query is valid PromQL (checked as recording rules by promtool)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'mango-dashboard-'));
    const file = join(dir, 'dashboard-queries.yaml');
    writeFileSync(
      file,
      stringify({
        groups: [
          {
            name: 'dashboard',
            rules: dashboardExprs.map((q, i) => ({ record: `mango:panel_${i}`, expr: q.expr })),
          },
        ],
      }),
    );
    expect(execFileSync(promtool, ['check', 'rules', file], { encoding: 'utf8' })).toContain(
      `SUCCESS: ${dashboardExprs.length} rules found`,
    );
  });

  it('every metric a rule or a panel names is one Mango exports (or a default process metric)', () => {
    const declared = declaredMetricNames();
    const used = [...alerts.map((a) => a.expr), ...dashboardExprs.map((q) => q.expr)].flatMap(metricNames);
    expect(used.length).toBeGreaterThan(20);
    const unknown = [...new Set(used)].filter((n) => !declared.has(n) && !/^mango_(process|nodejs)_/.test(n));
    expect(unknown).toEqual([]);
  });

  it('every alert links a runbook section that exists in docs/operations.md', () => {
    const doc = readFileSync(join(ROOT, 'docs/operations.md'), 'utf8');
    const anchors = new Set([...doc.matchAll(/^#+ (.+)$/gm)].map((m) => slug(m[1]!)));
    for (const a of alerts) {
      const [file, anchor] = a.annotations.runbook.split('#');
      expect(file).toBe('docs/operations.md');
      expect([a.alert, anchors.has(anchor!)]).toEqual([a.alert, true]);
    }
  });

  it('the chart installs exactly these rules (PrometheusRule) and this dashboard (ConfigMap) when asked, and nothing when not', () => {
    const render = (set: Record<string, unknown>) =>
      parseAllDocuments(
        execFileSync(
          helm,
          [
            'template',
            't',
            join(ROOT, 'deployments/helm/mango'),
            ...Object.entries({
              publicBaseUrl: 'https://mango.example',
              'database.url': 'postgres://u:p@db:5432/mango',
              'objectStore.accessKey': 'ak',
              'objectStore.secretKey': 'sk',
              'metrics.enabled': true,
              ...set,
            }).flatMap(([k, v]) => ['--set-json', `${k}=${JSON.stringify(v)}`]),
          ],
          { encoding: 'utf8' },
        ),
      )
        .map((d) => d.toJS())
        .filter(Boolean);
    const off = render({});
    expect(
      off.filter((d) => d.kind === 'PrometheusRule' || d.metadata?.name === 't-mango-dashboard'),
    ).toEqual([]);

    const on = render({ 'metrics.prometheusRule.enabled': true, 'metrics.grafanaDashboard.enabled': true });
    const rule = on.find((d) => d.kind === 'PrometheusRule');
    expect(rule.apiVersion).toBe('monitoring.coreos.com/v1');
    expect(rule.spec.groups).toEqual(rules.groups);
    // What the operator's Prometheus would load parses too.
    const dir = mkdtempSync(join(tmpdir(), 'mango-rule-'));
    writeFileSync(join(dir, 'rules.yaml'), stringify({ groups: rule.spec.groups }));
    expect(
      execFileSync(promtool, ['check', 'rules', join(dir, 'rules.yaml')], { encoding: 'utf8' }),
    ).toContain(`SUCCESS: ${alerts.length} rules found`);
    const board = on.find((d) => d.kind === 'ConfigMap' && d.metadata.name === 't-mango-dashboard');
    expect(board.metadata.labels.grafana_dashboard).toBe('1');
    expect(JSON.parse(board.data['mango-overview.json'])).toEqual(dashboard);
  });
});

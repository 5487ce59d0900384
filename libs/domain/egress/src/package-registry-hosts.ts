/**
 * The hosts `allow_package_managers: true` lets a sandbox reach, on port 443 only (docs/api-guide.md
 * "Sandbox egress" lists them; keep the two in step). The public registries of the package managers the
 * sandbox image carries or a Session installs most: pip, npm/yarn, Go modules, Cargo, RubyGems, Maven.
 * Exact names, no wildcards: a registry's CDN host is listed by name.
 */
export const PACKAGE_REGISTRY_HOSTS: readonly string[] = [
  // Python (pip, uv)
  'pypi.org',
  'files.pythonhosted.org',
  // JavaScript (npm, yarn, pnpm)
  'registry.npmjs.org',
  'registry.yarnpkg.com',
  // Go modules
  'proxy.golang.org',
  'sum.golang.org',
  // Rust (cargo)
  'index.crates.io',
  'static.crates.io',
  // Ruby (gem, bundler)
  'rubygems.org',
  'index.rubygems.org',
  // Java (Maven Central)
  'repo.maven.apache.org',
  'repo1.maven.org',
];

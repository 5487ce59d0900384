import { composeModelRequest } from '@mango/domain-sessions';
import { memoryMounts, type PromptInputs, skillEntries } from './prompt-inputs';
import type { SessionMemoryResource } from './session-memory-attachments';

/** PostgreSQL `jsonb` keeps keys sorted by length, then bytewise: what a frozen value reads back as. */
function asJsonb(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(asJsonb);
  if (value && typeof value === 'object')
    return Object.fromEntries(
      Object.entries(value)
        .sort(([a], [b]) => a.length - b.length || (a < b ? -1 : a > b ? 1 : 0))
        .map(([k, v]) => [k, asJsonb(v)]),
    );
  return value;
}

describe('prompt inputs frozen at Session create', () => {
  const rows = [
    { skill_id: 'skill_b', version: 3, name: 'csv-tools', description: 'Reads CSV files.' },
    { skill_id: 'skill_a', version: 1, name: 'pdf-tools', description: 'Fills PDF forms.' },
  ];
  const pins = [
    { skill_id: 'skill_a', version: '1' },
    { skill_id: 'skill_gone', version: '2' },
    { skill_id: 'skill_b', version: 3 },
  ];
  const resources: SessionMemoryResource[] = [
    {
      type: 'memory_store',
      memory_store_id: 'memstore_1',
      access: 'read_only',
      instructions: 'Check before answering.',
      name: 'Team notes',
      description: 'd',
      mount_path: '/mnt/memory/team-notes',
    },
    {
      type: 'memory_store',
      memory_store_id: 'memstore_2',
      access: 'read_write',
      instructions: null,
      name: 'Scratch',
      description: '',
      mount_path: '/mnt/memory/scratch',
    },
  ];

  it('lists pinned versions in pin order, leaving out a version that is gone', () => {
    expect(skillEntries(pins, rows)).toEqual([
      {
        skillId: 'skill_a',
        version: 1,
        name: 'pdf-tools',
        description: 'Fills PDF forms.',
        path: 'skills/pdf-tools/',
      },
      {
        skillId: 'skill_b',
        version: 3,
        name: 'csv-tools',
        description: 'Reads CSV files.',
        path: 'skills/csv-tools/',
      },
    ]);
    expect(memoryMounts(resources).map((m) => m.mount_path)).toEqual([
      '/mnt/memory/team-notes',
      '/mnt/memory/scratch',
    ]);
  });

  it('the model request from the frozen inputs (read back from jsonb) is byte-identical to the one read per step', () => {
    const agent = { system: 'You are careful.', tools: [] };
    // Read per step (the previous path, and the fallback for Sessions from before the freeze).
    const perStep: PromptInputs = { skills: skillEntries(pins, rows), memoryStores: memoryMounts(resources) };
    // Frozen at create, stored as jsonb, read back from the Session row.
    const frozen = asJsonb(JSON.parse(JSON.stringify(perStep))) as PromptInputs;
    expect(Object.keys(frozen.memoryStores[0]!)).not.toEqual(Object.keys(perStep.memoryStores[0]!));
    const before = composeModelRequest({ agent, ...perStep, mcpTools: [] });
    const after = composeModelRequest({ agent, ...frozen, mcpTools: [] });
    expect(JSON.stringify(after)).toBe(JSON.stringify(before));
    expect(after.system).toContain('<skill name="pdf-tools" path="skills/pdf-tools/">');
    expect(after.system).toContain('/mnt/memory/team-notes');
    expect(after.tools.map((t) => t.name)).toContain('activate_skill');
  });
});

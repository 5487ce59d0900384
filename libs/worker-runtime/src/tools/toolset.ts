import { BashTool } from './bash';
import { Confinement } from './confine';
import { editTool } from './edit';
import { globTool } from './glob';
import { grepTool } from './grep';
import { readTool } from './read';
import { Tool, ToolsetContext } from './types';
import { writeTool } from './write';

/** The six core tools (`agent_toolset_20260401`), in the contract's order. */
export function createToolset(ctx: ToolsetContext): Tool[] {
  const conf = new Confinement(ctx.workdir, ctx.roots ?? []);
  return [
    new BashTool({
      workdir: ctx.workdir,
      env: ctx.env,
      defaultTimeoutMs: ctx.bashTimeoutMs,
      outputLimitChars: ctx.bashOutputLimitChars,
    }),
    readTool(conf, ctx.readViewRangeAboveBytes),
    writeTool(conf),
    editTool(conf, ctx.maxFileBytes),
    globTool(conf),
    grepTool(conf),
  ];
}

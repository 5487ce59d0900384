import { proxyActivities } from '@temporalio/workflow';
import type { OutcomeActivities, TurnRef } from './activities.contract';
import { MODEL_ACTIVITY_OPTIONS } from './activity-options';

/** The grader request heartbeats like a model step (an interrupt's cancellation arrives that way). */
const outcomeActivities = proxyActivities<OutcomeActivities>(MODEL_ACTIVITY_OPTIONS);

/**
 * The outcome loop (docs/api-guide.md "Outcomes"), run at the end of a turn whose model steps ended:
 * grade the active outcome; `needs_revision` runs a revision turn (more model steps, with the grader's
 * feedback as input) and grades again; `max_iterations_reached` runs one final revision and stops;
 * `satisfied`, `failed` or no outcome stop at once. `revise` runs the model steps and answers false when
 * they stopped for an action or the budget (the turn then ends with that reason). Returns
 * `budget_reached` when the gate closed before a grader request.
 */
export async function runOutcomeLoop(
  ref: TurnRef,
  revise: () => Promise<boolean>,
): Promise<'budget_reached' | undefined> {
  for (let round = 0; ; round++) {
    const result = await outcomeActivities.gradeOutcome({ ...ref, round });
    if (result === 'budget_reached') return 'budget_reached';
    if (result !== 'needs_revision' && result !== 'max_iterations_reached') return undefined;
    if (!(await revise())) return undefined;
    if (result === 'max_iterations_reached') return undefined;
  }
}

/**
 * Spark 4.2's optimizer now and then refuses a plan it compiles at other times:
 * `[PLAN_VALIDATION_FAILED_RULE_IN_BATCH] Rule <rule> in batch <batch> generated an invalid plan`
 * (seen with PushDownPredicates in `CACHE TABLE … AS SELECT` over a commit's cached views and in
 * the target's MERGE, whose source Delta copies first, while other sessions of the server were at
 * work; the cause inside Spark is not known). The statement failed while being compiled, so it ran
 * nothing (no Delta commit, nothing cached) and may be sent again.
 *
 * Sending it again unchanged met the same refusal in a CI run (the cached plans it is compiled
 * against had not changed), so each attempt after a refusal leaves out of the optimizer the rule
 * that produced the invalid plan (`spark.sql.optimizer.excludedRules`, for that statement only).
 * An optimizer rule only rewrites a plan into an equivalent one: leaving one out changes how fast
 * the statement runs, never what it computes.
 */

/** At most this many attempts of one statement (each after a refusal leaves out more rules). */
export const PLAN_ATTEMPTS = 4;

const OPTIMIZER = 'org.apache.spark.sql.catalyst.optimizer.';
/**
 * Rules that do one job under several names: PushDownPredicates is CombineFilters with the two
 * PushPredicateThrough… rules, and PushPredicateThroughNonJoin also runs alone in a later batch
 * ("Extract Python UDFs"). Seen on Spark 4.2: with PushDownPredicates left out, the same statement
 * was refused by PushPredicateThroughNonJoin; with both left out it ran. So a refusal by one of
 * them leaves out all of them.
 */
const FAMILIES: readonly (readonly string[])[] = [['PushDownPredicates', 'PushPredicateThroughNonJoin', 'PushPredicateThroughJoin'].map((r) => OPTIMIZER + r)];

/** The rules to leave out after a refusal by `rule`: the rule and the rules of its family. */
export function rulesToLeaveOut(rule: string): string[] {
  return [...(FAMILIES.find((f) => f.includes(rule)) ?? [rule])];
}

/**
 * Send a statement; while Spark's optimizer refuses its plan, send it again with the rules it
 * named left out (`send` receives the rules to leave out, none the first time). `mayRetry`: false
 * once sending again would repeat what the caller already has (a streamed read's delivered rows).
 */
export async function againOnPlanValidation<T>(send: (excludedRules: readonly string[]) => Promise<T>, mayRetry: () => boolean = () => true): Promise<T> {
  const excluded: string[] = [];
  for (let attempt = 1; ; attempt++) {
    try {
      return await send([...excluded]);
    } catch (e) {
      const refusal = planRefusal(e);
      if (!refusal || attempt >= PLAN_ATTEMPTS || !mayRetry()) throw e;
      // A rule that cannot be named is not left out: the statement is only sent again.
      if (refusal.rule) for (const r of rulesToLeaveOut(refusal.rule)) if (!excluded.includes(r)) excluded.push(r);
    }
  }
}

/**
 * The same plan's other face, seen on the attempt after a refusal (a MERGE, in a CI run): an
 * unresolved expression met while the plan was compiled, so again nothing ran.
 */
const UNRESOLVED = /\bInvalid call to \w+ on unresolved object\b/;

/**
 * Whether an error is the optimizer's plan refusal, and the rule it names (fully qualified); an
 * unresolved object met in compilation is one that names no rule.
 */
export function planRefusal(e: unknown): { rule?: string } | undefined {
  const texts = [e instanceof Error ? e.message : String(e), e instanceof Error && e.cause instanceof Error ? e.cause.message : ''];
  const text = texts.find((t) => t.includes('PLAN_VALIDATION_FAILED_RULE_IN_BATCH'));
  if (text === undefined) return texts.some((t) => UNRESOLVED.test(t)) ? {} : undefined;
  const rule = /\bRule ([A-Za-z_$][\w$.]*) in batch\b/.exec(text)?.[1];
  return rule ? { rule } : {};
}

/** The session setting that leaves optimizer rules out (a comma-separated list of rule class names). */
export const EXCLUDED_RULES = 'spark.sql.optimizer.excludedRules';

/**
 * What Databricks (`create_auto_cdc_flow` / `apply_changes` arguments, the `APPLY CHANGES` /
 * `AUTO CDC` clauses) and dbt snapshot configs call the settings a flow has. A flow written with
 * one of these names is refused with the flow field to use and how to write it (docs/FLOWS.md
 * "From Databricks and dbt" has the whole table).
 */
export interface ForeignName {
  /** The flow field that does the same; none when a flow needs nothing in its place. */
  field?: string;
  /** How to write it (or why nothing replaces it), naming whose name it was. */
  hint: string;
}

const DATABRICKS = 'Databricks';
const DBT = 'dbt snapshots';

/** Foreign names, normalized (lower case, letters and digits only), to the flow field. */
const NAMES: Record<string, { field: string; from: string; write: string }> = {
  flowname: { field: 'name', from: DATABRICKS, write: 'name: customers' },
  sequenceby: { field: 'sequenceBy', from: DATABRICKS, write: 'sequenceBy: updated_at, or a list [ts, lsn]' },
  storedasscdtype: { field: 'storedAs', from: DATABRICKS, write: 'storedAs: scd2 or storedAs: scd1' },
  storedas: { field: 'storedAs', from: DATABRICKS, write: 'storedAs: scd2 or storedAs: scd1' },
  scdtype: { field: 'storedAs', from: DATABRICKS, write: 'storedAs: scd2 or storedAs: scd1' },
  trackhistorycolumnlist: { field: 'trackHistory', from: DATABRICKS, write: 'trackHistory: [city, tier]' },
  trackhistoryexceptcolumnlist: { field: 'trackHistoryExcept', from: DATABRICKS, write: 'trackHistoryExcept: [last_login]' },
  trackhistoryon: { field: 'trackHistory', from: DATABRICKS, write: 'trackHistory: [city, tier]' },
  columnlist: { field: 'columns', from: DATABRICKS, write: 'columns: [id, city]' },
  exceptcolumnlist: { field: 'exceptColumns', from: DATABRICKS, write: 'exceptColumns: [op]' },
  applyasdeletes: { field: 'applyAsDeletes', from: DATABRICKS, write: `applyAsDeletes: "op = 'DELETE'"` },
  applyasdeletewhen: { field: 'applyAsDeletes', from: DATABRICKS, write: `applyAsDeletes: "op = 'DELETE'"` },
  applyastruncates: { field: 'applyAsTruncates', from: DATABRICKS, write: `applyAsTruncates: "op = 'TRUNCATE'"` },
  applyastruncatewhen: { field: 'applyAsTruncates', from: DATABRICKS, write: `applyAsTruncates: "op = 'TRUNCATE'"` },
  ignorenullupdates: { field: 'ignoreNullUpdates', from: DATABRICKS, write: 'ignoreNullUpdates: true' },
  ignorenullupdatescolumnlist: { field: 'ignoreNullUpdates', from: DATABRICKS, write: 'ignoreNullUpdates: true, which holds for every column (not a list of them)' },
  ignorenullupdatesexceptcolumnlist: { field: 'ignoreNullUpdates', from: DATABRICKS, write: 'ignoreNullUpdates: true, which holds for every column (no columns excepted)' },
  uniquekey: { field: 'keys', from: DBT, write: 'keys: [customer_id]' },
  updatedat: { field: 'sequenceBy', from: DBT, write: 'sequenceBy: updated_at' },
  checkcols: { field: 'trackHistory', from: DBT, write: 'trackHistory: [city, tier], with sequenceBy still naming what orders the changes' },
  strategy: { field: 'sequenceBy', from: DBT, write: 'no strategy to choose: sequenceBy orders the changes, trackHistory narrows what opens a version' },
  harddeletes: { field: 'deletes', from: DBT, write: `applyAsDeletes names the deletes; deletes: tombstone is hard_deletes: new_record` },
  invalidateharddeletes: { field: 'applyAsDeletes', from: DBT, write: `applyAsDeletes: "op = 'DELETE'" ends the version` },
  dbtvalidtocurrent: { field: 'endSentinel', from: DBT, write: 'endSentinel: "9999-12-31"' },
  dbtvalidfrom: { field: 'startAtColumn', from: DBT, write: 'startAtColumn: dbt_valid_from' },
  dbtvalidto: { field: 'endAtColumn', from: DBT, write: 'endAtColumn: dbt_valid_to' },
  dbtscdid: { field: 'surrogateKey', from: DBT, write: 'surrogateKey: dbt_scd_id' },
  dbtisdeleted: { field: 'deletedColumn', from: DBT, write: 'deletes: tombstone, deletedColumn: dbt_is_deleted' },
  snapshotmetacolumnnames: { field: 'startAtColumn', from: DBT, write: 'startAtColumn, endAtColumn, surrogateKey, deletedColumn name the added columns' },
  targetschema: { field: 'schema', from: DBT, write: 'schema: analytics' },
  targetdatabase: { field: 'database', from: DBT, write: 'database: postgres://user@host/analytics (the schema in it is schema:)' },
};

/** Foreign names a flow has no field for, because scdkit does what they ask anyway: why. */
const NEEDLESS: Record<string, { from: string; why: string }> = {
  once: {
    from: DATABRICKS,
    why: 'there is no such field: each apply is one batch, reading what is pending once, and a landing folder applies each file exactly once anyway; remove it',
  },
};

/** The flow field a Databricks or dbt name stands for (or why none is needed), or undefined. */
export function foreignName(name: string): ForeignName | undefined {
  const normal = name.toLowerCase().replace(/[^a-z0-9]/g, '');
  const needless = NEEDLESS[normal];
  if (needless) return { hint: `${name} is a ${needless.from} option; ${needless.why}` };
  const n = NAMES[normal];
  if (!n) return undefined;
  return { field: n.field, hint: `${name} is what ${n.from} call it; write ${n.write}` };
}

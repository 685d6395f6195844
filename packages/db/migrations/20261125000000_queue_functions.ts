/**
 * The dispatcher's queue steps became functions here (a claim's lease, the recording of a batch of
 * results, a group's release), so each is one round trip and one commit. Their definitions live in
 * `packages/db/src/queue/functions/`, which every migrate writes after the migrations
 * (docs/decisions.md#database); this migration stays in the list, empty, because databases
 * record it as applied.
 */
export async function up(): Promise<void> {}

/** The ordered list of migrations; append, never edit a step that has shipped. */
import "server-only";
import type { Migration } from "../migrate";
import { sql as core } from "./0001-core";
import { sql as builtinApps } from "./0002-builtin-apps";
import { sql as decisions } from "./0003-decisions";
import { sql as secrets } from "./0004-secrets";
import { sql as turns } from "./0005-turns";
import { sql as input } from "./0006-input";
import { sql as vault } from "./0007-vault";
import { sql as runVaultNames } from "./0008-run-vault-names";
import { sql as vaultUsers } from "./0009-vault-users";
import { sql as chatPins } from "./0011-chat-pins";
import { sql as idempotencyKeys } from "./0012-idempotency-keys";
import { sql as oauthCredentials } from "./0013-oauth-credentials";
import { sql as cluster } from "./0015-cluster";
import { sql as appProgress } from "./0016-app-progress";
import { sql as grants } from "./0017-grants";
import { sql as inputPark } from "./0018-input-park";
import { sql as appTasks } from "./0019-app-tasks";
import { sql as runTraceparent } from "./0020-run-traceparent";
import { sql as operationArgsOnCall } from "./0022-operation-args-on-call";
import { sql as writeRoom } from "./0023-write-room";
import { sql as decisionRequester } from "./0024-decision-requester";
import { sql as presenceByPerson } from "./0025-presence-by-person";
import { sql as turnWaiting } from "./0026-turn-waiting";
import { sql as liveIndexes } from "./0027-live-indexes";
import { sql as sealedTransports } from "./0028-sealed-transports";
import { sql as removedPeople } from "./0029-removed-people";

export const MIGRATIONS: readonly Migration[] = [
  { id: "0001-core", sql: core },
  { id: "0002-builtin-apps", sql: builtinApps },
  { id: "0003-decisions", sql: decisions },
  { id: "0004-secrets", sql: secrets },
  { id: "0005-turns", sql: turns },
  { id: "0006-input", sql: input },
  { id: "0007-vault", sql: vault },
  { id: "0008-run-vault-names", sql: runVaultNames },
  { id: "0009-vault-users", sql: vaultUsers },
  { id: "0011-chat-pins", sql: chatPins },
  { id: "0012-idempotency-keys", sql: idempotencyKeys },
  { id: "0013-oauth-credentials", sql: oauthCredentials },
  { id: "0015-cluster", sql: cluster },
  { id: "0016-app-progress", sql: appProgress },
  { id: "0017-grants", sql: grants },
  { id: "0018-input-park", sql: inputPark },
  { id: "0019-app-tasks", sql: appTasks },
  { id: "0020-run-traceparent", sql: runTraceparent },
  { id: "0022-operation-args-on-call", sql: operationArgsOnCall },
  { id: "0023-write-room", sql: writeRoom },
  { id: "0024-decision-requester", sql: decisionRequester },
  { id: "0025-presence-by-person", sql: presenceByPerson },
  { id: "0026-turn-waiting", sql: turnWaiting },
  { id: "0027-live-indexes", sql: liveIndexes },
  { id: "0028-sealed-transports", sql: sealedTransports },
  { id: "0029-removed-people", sql: removedPeople },
];

import { updateUserInput, userIdInput } from "@/contracts/people";
import { guard } from "@/server/api/access";
import { parseInput, rest, withBody } from "@/server/http/rest";
import { removeUser, updateUser } from "@/server/services/people";

export const dynamic = "force-dynamic";
/** Changes a person's role (`{ role }`); answers the person's view. */
export const PATCH = rest(
  guard("PATCH /v1/users/[id]", ({ ctx, params, body }) =>
    updateUser(ctx, parseInput(updateUserInput, withBody(body, { id: params.id }))),
  ),
);
/** Removes a person: their keys are revoked and their live runs cancelled; again: their view, unchanged. */
export const DELETE = rest(
  guard("DELETE /v1/users/[id]", ({ ctx, params }) => removeUser(ctx, parseInput(userIdInput, { id: params.id }))),
);

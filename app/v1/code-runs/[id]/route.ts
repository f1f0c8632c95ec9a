import { rest } from "@/server/http/rest";
import { getRun } from "@/server/services/code-runs";

export const dynamic = "force-dynamic";
export const GET = rest(({ ctx, params }) => getRun(ctx, params.id!));

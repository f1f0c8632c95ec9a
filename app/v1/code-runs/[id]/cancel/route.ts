import { rest } from "@/server/http/rest";
import { cancelRun } from "@/server/services/code-runs";

export const dynamic = "force-dynamic";
export const POST = rest(({ ctx, params }) => cancelRun(ctx, params.id!));

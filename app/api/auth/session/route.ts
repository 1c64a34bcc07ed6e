import { handleSession } from "@/lib/auth/signin";

export const dynamic = "force-dynamic";

export const GET = handleSession;

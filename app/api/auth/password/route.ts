import { handlePasswordChange } from "@/lib/auth/signin";

export const dynamic = "force-dynamic";

export const POST = handlePasswordChange;

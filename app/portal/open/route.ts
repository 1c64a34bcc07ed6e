import { handlePortalOpen } from "@/lib/portal/open-link";

export const dynamic = "force-dynamic";

/** Opens a district portal link (public: the link's signed, single-use token is the credential). */
export const GET = handlePortalOpen;

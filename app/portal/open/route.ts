import { handlePortalOpen, handlePortalOpenPost } from "@/lib/portal/open-link";

export const dynamic = "force-dynamic";

/** Shows a district portal link's page without spending it (public: the link's signed, single-use token is the credential). */
export const GET = handlePortalOpen;
/** Opens the link: spends its token, sets the portal session (asking first when it would end another session). */
export const POST = handlePortalOpenPost;

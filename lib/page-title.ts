// A page's title names the page first, so a row of tabs reads "Dead letters · hookledger",
// "Maple Grove Public Schools · hookledger": Next.js's metadata applies the template to each page's own title; a page
// whose subject changes without a server render (the lookup's search) sets the whole title itself.
const SITE = "hookledger";

export const TITLE_TEMPLATE = `%s · ${SITE}`;

export function fullTitle(title: string): string {
  return TITLE_TEMPLATE.replace("%s", title);
}

/** "“stu_123” · Lookup": a tab per question. */
export function lookupTitle(q: string): string {
  return q ? `“${q}” · Lookup` : "Lookup";
}

// The demo's event catalog: the three types its traffic publishes, with schemas the traffic always meets, so the
// Event types page has something true to show and a publish that strays from them is refused as it would be in
// production. term_id stays optional on purpose: a grade recorded outside a grading term is valid for the SaaS, and
// one district's endpoint refusing it (HTTP 422) is the demo's permanent-failure story, which happens at the
// district, not at publish.
import type { PrismaClient } from "../lib/db/prisma";
import { SYSTEM } from "../lib/auth/principal";
import { createEventType } from "../lib/catalog/manage-event-types";
import type { TCreateEventType } from "../lib/catalog/event-type-input";

const str = (description: string) => ({ type: "string", minLength: 1, description });

export const DEMO_EVENT_TYPES: TCreateEventType[] = [
  {
    type: "assignment.graded",
    description: "A teacher recorded a grade for a student's assignment. Sent once per grade; a regrade is a new event with the same assignmentId.",
    schema: {
      type: "object",
      required: ["studentId", "schoolId", "assignmentId", "score", "maxScore", "gradedAt"],
      properties: {
        studentId: str("The student's id in the district's SIS"),
        studentName: str("As the SaaS knows it"),
        gradeLevel: { type: "integer", minimum: 0, maximum: 12, description: "0 is kindergarten" },
        schoolId: str("The school's id"),
        school: str("The school's name"),
        assignmentId: str("The assignment's id"),
        assignmentTitle: str("As the teacher wrote it"),
        course: str("The course the assignment belongs to"),
        score: { type: "number", minimum: 0, description: "Points earned" },
        maxScore: { type: "number", exclusiveMinimum: 0, description: "Points possible" },
        letterGrade: { type: "string", enum: ["A", "B", "C", "D", "F"], description: "From score / maxScore" },
        gradedAt: { type: "string", format: "date-time", description: "When the teacher saved the grade" },
        term_id: str("The grading term; absent when graded outside a term"),
      },
    },
    example: {
      studentId: "stu_lin_0001",
      studentName: "Ada Park",
      gradeLevel: 7,
      schoolId: "sch_lin_01",
      school: "Lincoln Middle School",
      assignmentId: "asg_110",
      assignmentTitle: "Fractions quiz",
      course: "Math 7",
      score: 17.5,
      maxScore: 20,
      letterGrade: "B",
      gradedAt: "2026-09-14T15:02:11.000Z",
      term_id: "fall-2026",
    },
    summaryFields: ["/studentName", "/assignmentTitle", "/score"],
  },
  {
    type: "attendance.recorded",
    description: "A student's attendance for one period of one day.",
    schema: {
      type: "object",
      required: ["studentId", "schoolId", "date", "period", "status"],
      properties: {
        studentId: str("The student's id in the district's SIS"),
        studentName: str("As the SaaS knows it"),
        schoolId: str("The school's id"),
        date: { type: "string", format: "date", description: "The school day" },
        period: { type: "integer", minimum: 1, maximum: 12 },
        status: { type: "string", enum: ["present", "tardy", "absent", "excused"] },
        term_id: str("The grading term"),
      },
    },
    example: { studentId: "stu_lin_0001", studentName: "Ada Park", schoolId: "sch_lin_01", date: "2026-09-14", period: 2, status: "tardy", term_id: "fall-2026" },
    summaryFields: ["/studentName", "/status"],
  },
  {
    type: "roster.updated",
    description: "Students were added to or removed from a course section.",
    schema: {
      type: "object",
      required: ["schoolId", "sectionId", "course"],
      properties: {
        schoolId: str("The school's id"),
        school: str("The school's name"),
        sectionId: str("The section's id"),
        course: str("The course"),
        added: { type: "array", items: { type: "object", required: ["studentId"] }, description: "Students who joined" },
        removed: { type: "array", items: { type: "object", required: ["studentId"] }, description: "Students who left" },
        term_id: str("The grading term"),
      },
    },
    example: {
      schoolId: "sch_lin_01",
      school: "Lincoln Middle School",
      sectionId: "sec_lin_01_math7",
      course: "Math 7",
      added: [{ studentId: "stu_lin_0001", studentName: "Ada Park" }],
      term_id: "fall-2026",
    },
    summaryFields: ["/sectionId"],
  },
];

/** Catalogues the demo's types once; an entry someone already made (or changed on the page) is left as it is. */
export async function ensureDemoEventTypes(prisma: PrismaClient): Promise<void> {
  for (const t of DEMO_EVENT_TYPES) {
    if (await prisma.eventType.findUnique({ where: { type: t.type }, select: { type: true } })) continue;
    await createEventType(prisma, SYSTEM, t).catch(async (err) => {
      // Another demo process catalogued it first: fine, it exists now.
      if (!(await prisma.eventType.findUnique({ where: { type: t.type }, select: { type: true } }))) throw err;
    });
  }
}

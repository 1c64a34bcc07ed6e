// Placeholder until the delivery worker lands (issue: delivery worker).
export async function runWorker(_opts: { databaseUrl: string }): Promise<void> {
  throw new Error("The delivery worker is not built yet.");
}

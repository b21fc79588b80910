import ServiceLifecycle

/// Runs `work` every `interval` until graceful shutdown (or cancellation), first after one interval.
func runPeriodically(every interval: Duration, _ work: @escaping @Sendable () async -> Void) async {
    await cancelWhenGracefulShutdown {
        while !Task.isCancelled {
            do {
                try await Task.sleep(for: interval)
            } catch {
                return
            }
            await work()
        }
    }
}

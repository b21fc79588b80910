/// Memory that steps aside while transforms run: told the bytes each transform reserves from the
/// ``TransformMemoryBudget`` and when it gives them back. The memory tier is one: it holds fewer bytes
/// while a large transform runs, so the cache and the transforms together stay near the tier's budget.
public protocol TransformMemoryLender: Sendable {
    /// A transform reserved `bytes`; hold that much less until ``takeBack(_:)``.
    func lend(_ bytes: Int)
    /// A transform gave back `bytes` lent before.
    func takeBack(_ bytes: Int)
}

/// Memory held in the ``TransformMemoryBudget`` for later use that gives itself back on demand: asked
/// before a transform's reservation waits (the kept decodes of ``DecodedSourceCache``).
public protocol TransformMemoryReclaimer: AnyObject, Sendable {
    /// Gives back at least `bytes` if it can (what no transform is using), through the budget's
    /// ``TransformMemoryBudget/release(_:)``.
    func reclaim(_ bytes: Int)
}

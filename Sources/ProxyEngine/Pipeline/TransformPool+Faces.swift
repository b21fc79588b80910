import ImageCore

/// Faces for `g=face` (and `g=smart` with `image.smartFaces`): searched once per source on a pool thread,
/// under a reservation of the search's memory, and kept (``faceSearches``).
extension TransformPool {
    /// `request` with its cover crop anchored on the faces of `source` (``ImageRequest/anchored(on:)``) when
    /// it asks for them; as it is otherwise.
    /// - Throws: ``ImagingError`` (the source cannot be read, face detection is unavailable, the memory
    ///   stayed taken).
    func resolvingFaces(
        _ request: ImageRequest, source: [UInt8], with transformer: ImageTransformer, requestID: String?,
        identity: @autoclosure () -> String?
    ) async throws -> ImageRequest {
        guard request.cropsAroundFaces(smartFaces: transformer.smartFaces) else { return request }
        let search: FaceSearch
        if let identity = identity() {
            if let known = faceSearches.search(for: identity) {
                search = known
            } else {
                search = try await searchFaces(source, with: transformer, requestID: requestID)
                faceSearches.keep(search, for: identity)
            }
        } else {
            search = try await searchFaces(source, with: transformer, requestID: requestID)
        }
        return request.anchored(on: search)
    }

    /// The faces in `source`, searched on a pool thread (``ImageTransformer/faceSearch(_:)``).
    public func searchFaces(_ source: [UInt8], with transformer: ImageTransformer, requestID: String?) async throws -> FaceSearch {
        let wait = Duration.milliseconds(transformer.maxTransformMilliseconds > 0 ? transformer.maxTransformMilliseconds : 10_000)
        let bytes = try await memoryBudget.reserve(FaceDetector.workingSetBytes, wait: wait)
        defer { memoryBudget.release(bytes) }
        return try await run(requestID: requestID) { try transformer.faceSearch(source) }
    }
}

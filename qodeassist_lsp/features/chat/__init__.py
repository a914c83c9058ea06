"""Chat: streamed turns, persistence, compression."""

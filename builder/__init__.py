"""ClariEdge builder: build, audit, publish and evaluate a query-clarification set for RAG."""

__version__ = "0.1.0"

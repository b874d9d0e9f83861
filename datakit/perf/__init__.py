"""Measuring pipelines: timelines, throughput, memory, synthetic sources, and the tuner."""

__all__: list[str] = []

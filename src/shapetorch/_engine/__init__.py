"""The engine: primitives (one kernel per device, the gradient rules), the graph nodes they record, the
backward pass, anomaly detection and the slow path that the profiler, forward-mode AD and inference mode
install. It sits above the tensor and below the backends and ops; the parts above it register what it
calls (the profiler's active profile, forward AD's tangent rule, the kernels of each device).
"""

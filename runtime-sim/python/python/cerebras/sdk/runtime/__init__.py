"""Vendor-compatible ``cerebras.sdk.runtime`` package, provided by cslsim (an independent
implementation, not affiliated with Cerebras Systems)."""

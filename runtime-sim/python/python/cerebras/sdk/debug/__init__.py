"""Vendor-compatible ``cerebras.sdk.debug`` package, provided by cslsim (an independent
implementation, not affiliated with Cerebras Systems)."""

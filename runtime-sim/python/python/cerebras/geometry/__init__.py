"""``cerebras.geometry`` as SdkLayout scripts import it, implemented by cslsim (an
independent implementation, not affiliated with Cerebras Systems)."""

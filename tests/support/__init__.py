"""Test harness that runs outside pytest too (the CPU Triton server's scripted models)."""

"""canoe.* protobuf packages (generated code lives in the subpackages)."""

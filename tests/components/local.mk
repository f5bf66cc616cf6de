# Test components, built as real DSOs that the loader tests open.

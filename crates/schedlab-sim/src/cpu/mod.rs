//! CPU scheduling policies, one file each, and the registry that names them.

// See ../c10/macros/Macros.h: the same fence, with the same message, for the most common entry.
#error "Torch is included from outside parrot_core: only core/ may see Torch (cmake/torchfence, docs/ARCHITECTURE.md)"

// Every Torch header includes this one. Libraries outside parrot_core (base, figures, ui) have
// this folder first on their include path, so reaching Torch from them stops the build here.
#error "Torch is included from outside parrot_core: only core/ may see Torch (cmake/torchfence, docs/ARCHITECTURE.md)"

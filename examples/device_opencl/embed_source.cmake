# cmake -DIN=kernels.cl -DOUT=kernels_cl.h -P embed_source.cmake: the file as a C++ string.
file(READ ${IN} text)
file(WRITE ${OUT} "// Generated from kernels.cl by embed_source.cmake: do not edit.\n#pragma once\n"
     "static const char kKernelsCl[] = R\"tide_cl(${text})tide_cl\";\n")

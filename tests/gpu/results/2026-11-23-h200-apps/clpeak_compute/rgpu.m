Global memory bandwidth (GBPS) / float	4092.78
Global memory bandwidth (GBPS) / float2	4132.16
Global memory bandwidth (GBPS) / float4	4159.05
Global memory bandwidth (GBPS) / float8	4269.69
Global memory bandwidth (GBPS) / float16	4330.48
Single-precision compute (GFLOPS) / float	63592.50
Single-precision compute (GFLOPS) / float2	62829.03
Single-precision compute (GFLOPS) / float4	63301.39
Single-precision compute (GFLOPS) / float8	63023.67
Single-precision compute (GFLOPS) / float16	62408.07
Double-precision compute (GFLOPS) / double	32501.82
Double-precision compute (GFLOPS) / double2	32558.56
Double-precision compute (GFLOPS) / double4	32423.00
Double-precision compute (GFLOPS) / double8	32396.82
Double-precision compute (GFLOPS) / double16	32146.99
Integer compute (GIOPS) / int	32947.07
Integer compute (GIOPS) / int2	32976.71
Integer compute (GIOPS) / int4	32979.53
Integer compute (GIOPS) / int8	33006.92
Integer compute (GIOPS) / int16	32919.52
Integer compute Fast 24bit (GIOPS) / int	32878.54
Integer compute Fast 24bit (GIOPS) / int2	32971.86
Integer compute Fast 24bit (GIOPS) / int4	32992.32
Integer compute Fast 24bit (GIOPS) / int8	32827.02
Integer compute Fast 24bit (GIOPS) / int16	32438.34
Kernel launch latency	7.14

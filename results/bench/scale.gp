# gnuplot scale.gp (from results/bench) writes scale.png: the simulator's CPU time against GPUs, from
# scale.dat (columns: label kind nodes gpus user_s sys_s maxrss_KB step_time_ms; see scale.md).
set terminal pngcairo size 800,500 font ",11"
set output 'scale.png'
set logscale xy
set xlabel "GPUs"
set ylabel "CPU seconds per run (user + sys)"
set key top left
set grid
set xtics (8, 64, 256, 512, 2048, 4096, 16384)
set xrange [6:20000]
set title "stepsim: CPU time per run against GPUs (shared 2-core machine)"
plot "< awk '$1==\"before\" && $2==\"dp\"' scale.dat" using 4:($5+$6) with linespoints title "DP step, before (main e6d82e9)", \
     "< awk '$1==\"after\" && $2==\"dp\"' scale.dat" using 4:($5+$6) with linespoints title "DP step, after", \
     "< awk '$1==\"routes\" && $2==\"dp\"' scale.dat" using 4:($5+$6) with points pt 6 title "DP step, route search only", \
     "< awk '$1==\"before\" && $2==\"ex\"' scale.dat" using 4:($5+$6) with linespoints title "1.3B example, before", \
     "< awk '$1==\"after\" && $2==\"ex\"' scale.dat" using 4:($5+$6) with linespoints title "1.3B example, after", \
     "< awk '$1==\"symmetry\" && $2==\"dp\"' scale.dat" using 4:($5+$6) with linespoints lw 2 title "DP step without jitter, symmetry reduction (exact)", \
     "< awk '$1==\"symmetry\" && $2==\"ex\"' scale.dat" using 4:($5+$6) with points pt 7 ps 1.5 title "1.3B example without jitter, symmetry reduction", \
     1.0 with lines dashtype 2 title "target at 4,096 GPUs: 1 s", \
     5.0 with lines dashtype 3 title "target at 16,384 GPUs: 5 s"

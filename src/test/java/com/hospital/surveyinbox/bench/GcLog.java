package com.hospital.surveyinbox.bench;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The heap of a JVM the benchmark started, read from its own GC log ({@code -Xlog:gc:file=...}): every
 * collection writes "used before -> used after (committed)", so the peak in use is the largest "before" of a
 * window (what the heap held when it had to collect) and the committed size the largest in parentheses. Reading a
 * log costs the measured JVM nothing, unlike an attach (jcmd, jstat) that would run in the measured windows.
 */
final class GcLog {

    private static final Pattern COLLECTION = Pattern.compile("Pause (?:Young|Full)[^\\n]*? (\\d+)([KMG])->(\\d+)([KMG])\\((\\d+)([KMG])\\)");

    private final Path file;

    GcLog(Path file) {
        this.file = file;
    }

    Path file() {
        return file;
    }

    /** Where the log ends now: a window's figures are read from here on. */
    long mark() {
        try {
            return Files.exists(file) ? Files.size(file) : 0;
        } catch (IOException e) {
            return 0;
        }
    }

    /**
     * Since {@code from}: the peak heap in use (before a collection: for ParallelGC about eden plus the old
     * generation, the collector's sizing as much as the service's), the largest live set (after a collection),
     * the committed heap, and the number of collections.
     */
    Map<String, Double> since(long from) {
        double used = 0;
        double live = 0;
        double committed = 0;
        int collections = 0;
        try (RandomAccessFile in = new RandomAccessFile(file.toFile(), "r")) {
            in.seek(from);
            byte[] rest = new byte[(int) (in.length() - from)];
            in.readFully(rest);
            Matcher m = COLLECTION.matcher(new String(rest, StandardCharsets.UTF_8));
            while (m.find()) {
                used = Math.max(used, mib(m.group(1), m.group(2)));
                live = Math.max(live, mib(m.group(3), m.group(4)));
                committed = Math.max(committed, mib(m.group(5), m.group(6)));
                collections++;
            }
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
        Map<String, Double> figures = new LinkedHashMap<>();
        boolean any = collections > 0; // no collection in the window: nothing known, not zero
        figures.put("peak_heap_used_mib", any ? used : Double.NaN);
        figures.put("peak_live_after_gc_mib", any ? live : Double.NaN);
        figures.put("heap_committed_mib", any ? committed : Double.NaN);
        figures.put("collections", (double) collections);
        return figures;
    }

    static double mib(String value, String unit) {
        double v = Double.parseDouble(value);
        return switch (unit) {
            case "K" -> v / 1024;
            case "G" -> v * 1024;
            default -> v;
        };
    }
}

package com.hospital.surveyinbox.support;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;

/**
 * Stops the services the local run started when its JVM dies without running its shutdown hook (SIGKILL,
 * the OOM killer, a crashed IDE): a small POSIX shell process, in a session of its own, that waits for the
 * JVM to end and then signals PostgreSQL's postmaster (SIGINT: fast shutdown), the broker JVM and
 * redis-server (SIGTERM), waits for them, and removes their temporary folders. An ordinary stop ends the
 * reaper first ({@link #cancel}): the JVM stops its services itself, and the reaper never signals a pid the
 * system may have given to another process since.
 */
final class OrphanReaper {

    private final Process process;

    private OrphanReaper(Process process) {
        this.process = process;
    }

    /**
     * @param term processes to end with SIGTERM (broker JVM, redis-server)
     * @param postmaster PostgreSQL's postmaster (SIGINT = fast shutdown), or 0
     * @param folders temporary folders removed once they are all gone
     */
    static OrphanReaper watch(long jvm, List<Long> term, long postmaster, List<Path> folders) throws IOException {
        List<Long> all = new ArrayList<>(term);
        if (postmaster > 0) {
            all.add(postmaster);
        }
        String pids = all.stream().map(String::valueOf).collect(Collectors.joining(" "));
        String script = String.join("\n",
                "trap '' INT HUP", // Ctrl-C on the terminal is the JVM's to handle
                "while kill -0 " + jvm + " 2>/dev/null; do sleep 1; done",
                "for p in " + term.stream().map(String::valueOf).collect(Collectors.joining(" ")) + "; do kill -TERM $p 2>/dev/null; done",
                postmaster > 0 ? "kill -INT " + postmaster + " 2>/dev/null" : ":",
                "i=0",
                "while [ $i -lt 20 ]; do",
                "  alive=0; for p in " + pids + "; do kill -0 $p 2>/dev/null && alive=1; done",
                "  [ $alive = 0 ] && break",
                "  sleep 1; i=$((i+1))",
                "done",
                "for p in " + pids + "; do kill -0 $p 2>/dev/null && kill -KILL $p; done",
                "rm -rf " + folders.stream().map(f -> quoted(f.toAbsolutePath().toString())).collect(Collectors.joining(" ")));
        List<String> command = new ArrayList<>();
        // its own session where setsid exists: a signal to the run's process group misses it
        Tools.setsid().ifPresent(setsid -> command.add(setsid.toString()));
        command.addAll(List.of("/bin/sh", "-c", script));
        Process process = new ProcessBuilder(command).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.to(new File("/dev/null"))).start();
        return new OrphanReaper(process);
    }

    /** {@code text} as one shell word: in single quotes, each single quote written as '\'' . */
    static String quoted(String text) {
        return "'" + text.replace("'", "'\\''") + "'";
    }

    /** The JVM is stopping its services itself: the reaper is not needed. */
    void cancel() {
        process.descendants().forEach(ProcessHandle::destroy);
        process.destroy();
        try {
            process.waitFor(5, java.util.concurrent.TimeUnit.SECONDS); // gone before a successor is started
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** The postmaster's pid, from the first line of {@code postmaster.pid} in the data folder; 0 if unreadable. */
    static long postmaster(Path dataDirectory) {
        try {
            String first = Files.readAllLines(dataDirectory.resolve("postmaster.pid")).get(0).strip();
            return Long.parseLong(first);
        } catch (IOException | RuntimeException e) {
            return 0;
        }
    }
}

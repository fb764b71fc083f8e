package com.hospital.surveyinbox.support;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import redis.embedded.core.ExecutableProvider;

/**
 * A real redis-server (the binary embedded-redis ships) whose lifecycle belongs to {@link EmbeddedServices}
 * alone. The library's own {@code RedisServer} registers a JVM shutdown hook that stops the server
 * whenever the JVM exits, racing the one hook that closes the service's contexts first (Lettuce logged
 * failed reconnects while the service was still finishing registrations). Started through {@code setsid},
 * like the broker, so the terminal's Ctrl-C reaches the service and not Redis; {@code setsid} execs the
 * server in place, so this process is the server.
 */
final class RedisProcess {

    private final Process process;

    private RedisProcess(Process process) {
        this.process = process;
    }

    static RedisProcess start(int port) throws IOException {
        String server = ExecutableProvider.newJarResourceProvider().get().getAbsolutePath();
        List<String> command = new java.util.ArrayList<>();
        // where setsid exists (Linux); elsewhere Redis shares the run's process group
        Tools.setsid().ifPresent(setsid -> command.add(setsid.toString()));
        command.addAll(List.of(server, "--port", Integer.toString(port), "--bind", "127.0.0.1", "--save", "",
                "--appendonly", "no"));
        Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        CompletableFuture<Boolean> ready = new CompletableFuture<>();
        Thread output = new Thread(() -> {
            try (BufferedReader lines = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
                String line;
                while ((line = lines.readLine()) != null) { // read to the end, so the server never blocks on its output
                    if (line.contains("Ready to accept connections")) {
                        ready.complete(true);
                    }
                }
            } catch (IOException e) {
                // the server ended
            }
            ready.complete(false);
        }, "redis-server-output");
        output.setDaemon(true);
        output.start();
        try {
            if (!ready.get(30, TimeUnit.SECONDS)) {
                throw new IOException("redis-server on port " + port + " ended before it was ready");
            }
        } catch (Exception e) {
            process.destroyForcibly();
            throw e instanceof IOException io ? io : new IOException("redis-server on port " + port + " did not start", e);
        }
        return new RedisProcess(process);
    }

    /** The redis-server's pid ({@code setsid} execs it: the same process). */
    long pid() {
        return process.pid();
    }

    /** SIGTERM (redis-server shuts down at once: nothing to save), then waits for it to end. */
    void stop() {
        process.destroy();
        try {
            if (!process.waitFor(10, TimeUnit.SECONDS)) {
                process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            process.destroyForcibly();
        }
    }
}

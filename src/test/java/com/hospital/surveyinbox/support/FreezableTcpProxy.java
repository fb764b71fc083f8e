package com.hospital.surveyinbox.support;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A TCP proxy on loopback that can freeze traffic without closing a socket: what a network partition or
 * a frozen database primary looks like to a client (connections stay open, nothing answers). Bytes read
 * while frozen are held and delivered once thawed.
 */
public final class FreezableTcpProxy implements AutoCloseable {

    private final ServerSocket server;
    private final int targetPort;
    private final List<Socket> sockets = new CopyOnWriteArrayList<>();
    private final Object gate = new Object();
    private volatile boolean frozen;
    /** Connections whose traffic is dropped, both ways, without closing them. */
    private final java.util.Set<Socket> blackholed = java.util.concurrent.ConcurrentHashMap.newKeySet();
    private volatile boolean closed;
    private volatile boolean refusing;
    /** Connections closed at once while {@link #cutOff()} held (what a client saw as "cannot connect"). */
    private final java.util.concurrent.atomic.AtomicInteger refused = new java.util.concurrent.atomic.AtomicInteger();
    /** Delay (ms) added to every chunk sent towards the server, drawn in [slowMin, slowMax]; 0 = none. */
    private volatile int slowMin;
    private volatile int slowMax;
    /** Opened by {@link #close()}: a simulated latency waits for it, at most its own length. */
    private final java.util.concurrent.CountDownLatch closing = new java.util.concurrent.CountDownLatch(1);

    public FreezableTcpProxy(int targetPort) throws IOException {
        this.targetPort = targetPort;
        this.server = new ServerSocket(0, 200, InetAddress.getLoopbackAddress());
        Thread acceptor = new Thread(this::accept, "proxy-accept-" + server.getLocalPort());
        acceptor.setDaemon(true);
        acceptor.start();
    }

    /**
     * A proxy in front of the embedded PostgreSQL that the next Spring context started in this JVM connects through
     * (EmbeddedServicesInitializer reads the override); call from a test class's static initializer, and
     * {@link #removeFromContexts()} after the class.
     */
    public static FreezableTcpProxy inFrontOfPostgresForTheNextContext() {
        try {
            FreezableTcpProxy proxy = new FreezableTcpProxy(EmbeddedServices.get().postgresPort());
            System.setProperty(EmbeddedServicesInitializer.POSTGRES_OVERRIDE,
                    "jdbc:postgresql://localhost:" + proxy.port() + "/" + EmbeddedServices.DB_NAME);
            return proxy;
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    /** Later contexts connect directly again; whatever this one holds flows (thawed, connections accepted). */
    public void removeFromContexts() {
        System.clearProperty(EmbeddedServicesInitializer.POSTGRES_OVERRIDE);
        System.clearProperty(EmbeddedServicesInitializer.REDIS_PORT_OVERRIDE);
        restore();
        thaw();
    }

    /** Connections closed at once so far while cut off. */
    public int refused() {
        return refused.get();
    }

    /** Connections accepted so far. */
    public int accepted() {
        return sockets.size() / 2;
    }

    public int port() {
        return server.getLocalPort();
    }

    /** From now on nothing passes in either direction; every socket stays open. */
    public void freeze() {
        frozen = true;
    }

    /**
     * A slow (not frozen) server: every chunk a client sends (a statement, a commit) is held for a random
     * {@code minMillis}..{@code maxMillis} first; answers pass at once.
     */
    public void slow(int minMillis, int maxMillis) {
        slowMin = minMillis;
        slowMax = maxMillis;
    }

    /** No added delay any more. */
    public void fast() {
        slowMin = 0;
        slowMax = 0;
    }

    /**
     * A failover or a cut link: every open connection is closed at once (what was in flight is lost, never
     * delivered later) and new ones are closed as soon as they are accepted, until {@link #restore()}.
     */
    public void cutOff() {
        refusing = true;
        sockets.forEach(FreezableTcpProxy::closeQuietly);
    }

    /** New connections reach the server again. */
    public void restore() {
        refusing = false;
    }

    /**
     * The connections open now go silent for good: what they carry is dropped both ways, their sockets stay open
     * (a failover or a partition that drops packets: the client sees no close, no reset, only silence until the
     * kernel gives up, ~15 minutes). New connections flow.
     */
    public void blackholeOpenConnections() {
        blackholed.addAll(sockets);
    }

    /**
     * A proxy in front of the embedded Redis that the next Spring context started in this JVM connects through;
     * call from a test class's static initializer, and {@link #removeFromContexts()} after the class.
     */
    public static FreezableTcpProxy inFrontOfRedisForTheNextContext() {
        try {
            FreezableTcpProxy proxy = new FreezableTcpProxy(EmbeddedServices.get().redisPort());
            System.setProperty(EmbeddedServicesInitializer.REDIS_PORT_OVERRIDE, Integer.toString(proxy.port()));
            return proxy;
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    /** Traffic flows again, held bytes first. */
    public void thaw() {
        synchronized (gate) {
            frozen = false;
            gate.notifyAll();
        }
    }

    private void accept() {
        while (!closed) {
            try {
                Socket client = server.accept();
                if (refusing) {
                    refused.incrementAndGet();
                    closeQuietly(client);
                    continue;
                }
                Socket upstream = new Socket(InetAddress.getLoopbackAddress(), targetPort);
                sockets.add(client);
                sockets.add(upstream);
                pump(client, upstream, true);
                pump(upstream, client, false);
            } catch (IOException e) {
                if (closed) {
                    return;
                }
            }
        }
    }

    private void pump(Socket from, Socket to, boolean towardsServer) {
        Thread t = new Thread(() -> {
            byte[] buffer = new byte[16 * 1024];
            try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
                int n;
                while ((n = in.read(buffer)) >= 0) {
                    if (blackholed.contains(from)) {
                        continue;
                    }
                    awaitThaw();
                    if (towardsServer && slowMax > 0) {
                        // simulated server latency: waits for the proxy to close, the latency as its deadline
                        closing.await(java.util.concurrent.ThreadLocalRandom.current().nextInt(slowMin, slowMax + 1),
                                java.util.concurrent.TimeUnit.MILLISECONDS);
                    }
                    out.write(buffer, 0, n);
                    out.flush();
                }
            } catch (IOException | InterruptedException e) {
                // the peer went away, or the proxy is closing
            } finally {
                closeQuietly(from);
                closeQuietly(to);
            }
        }, "proxy-pump");
        t.setDaemon(true);
        t.start();
    }

    private void awaitThaw() throws InterruptedException {
        synchronized (gate) {
            while (frozen && !closed) {
                gate.wait(100);
            }
        }
    }

    @Override
    public void close() {
        closed = true;
        closing.countDown();
        thaw();
        closeQuietly(server);
        sockets.forEach(FreezableTcpProxy::closeQuietly);
    }

    private static void closeQuietly(java.io.Closeable c) {
        try {
            c.close();
        } catch (IOException ignored) {
            // closing anyway
        }
    }
}

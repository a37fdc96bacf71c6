package io.livenesslab.service;

import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoop;
import io.netty.channel.IoHandlerFactory;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollChannelOption;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.handler.codec.http.HttpResponseDecoder;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.util.ReferenceCountUtil;
import org.HdrHistogram.Histogram;
import tools.jackson.databind.json.JsonMapper;

/**
 * The benchmark's load generator: open loop at a constant rate, one event loop (one CPU), keep-alive
 * HTTP/1.1, one request per connection at a time. Request {@code i} is due at {@code start + i / rate};
 * its latency runs from that intended time, not from when a connection was free to send it, so a slow
 * server cannot hide behind a client that waits (no coordinated omission). A due request takes an idle
 * connection, else opens one (up to {@code --max-connections}), else waits in a queue; one not answered
 * within {@code --timeout-ms} of its intended time is an error and its connection is closed. Connections
 * are opened with connect(2) alone (no bind before it, unlike vegeta), so ports other connections
 * left in TIME_WAIT cost the kernel no search. Built with the service's tests for {@code scripts/bench.sh}
 * only (never in the jar or the image).
 *
 * <p>Arguments: {@code --url=http://127.0.0.1:PORT/PATH} {@code --rate=REQ_PER_S}
 * {@code --duration-s=N} {@code --timeout-ms=N} {@code --max-connections=N}. Prints one JSON report on
 * standard output, in the shape of {@code vegeta report -type=json} (nanoseconds; {@code success} a
 * ratio), plus {@code connections_opened}, {@code send_lag_99th} (how late the client itself sent) and
 * {@code latencies_second_half} (the requests due in the run's second half: its steady state).
 */
public final class OpenLoopClient {

	/**
	 * The connections' source addresses, in turn. Linux's connect(2) tries the even ports of the ephemeral
	 * range first: past about 14,000 connections from one address to one server each new one scanned them
	 * all, the client's system time grew with every connection, it sent late and opened more (measured at
	 * 10,000 req/s: 19,500 connections, sent 4 s late at p99). Four addresses keep each under 5,000. With
	 * epoll the port is chosen at connect (IP_BIND_ADDRESS_NO_PORT), where a port in TIME_WAIT on this
	 * loopback can be reused; all of 127.0.0.0/8 is the loopback interface's on Linux.
	 */
	private static final String[] SOURCES = { "127.0.1.1", "127.0.1.2", "127.0.1.3", "127.0.1.4" };

	private final String host;

	private final int port;

	private final ByteBuf request;

	private final long rate;

	private final long total;

	private final long timeoutNanos;

	private final int maxConnections;

	private final EventLoop loop;

	private final Bootstrap bootstrap;

	private final ArrayDeque<Conn> idle = new ArrayDeque<>();

	private final ArrayList<Conn> all = new java.util.ArrayList<>();

	private long ticks;

	private long[] pending = new long[1024];

	private int pendingHead;

	private int pendingSize;

	private final Histogram latencies = new Histogram(TimeUnit.HOURS.toNanos(1), 4);

	private final Histogram sendLag = new Histogram(TimeUnit.HOURS.toNanos(1), 2);

	/** The latencies of the requests due in the run's second half: the steady state, its connections made. */
	private final Histogram secondHalf = new Histogram(TimeUnit.HOURS.toNanos(1), 4);

	private final Map<Integer, Long> statusCodes = new TreeMap<>();

	private final Map<String, Long> errors = new LinkedHashMap<>();

	private final CountDownLatch done = new CountDownLatch(1);

	private long start;

	private long sent;

	private long finished;

	private long successes;

	private long lastAnswer;

	private int open;

	private long opened;

	OpenLoopClient(URI url, long rate, long durationS, long timeoutMs, int maxConnections, EventLoop loop,
			Class<? extends SocketChannel> channel) {
		this.host = url.getHost();
		this.port = url.getPort();
		String path = url.getRawPath() + ((url.getRawQuery() != null) ? "?" + url.getRawQuery() : "");
		this.request = Unpooled.unreleasableBuffer(Unpooled.directBuffer()
			.writeBytes(("GET " + path + " HTTP/1.1\r\nHost: " + this.host + ":" + this.port + "\r\n\r\n")
				.getBytes(StandardCharsets.US_ASCII)));
		this.rate = rate;
		this.total = rate * durationS;
		this.timeoutNanos = TimeUnit.MILLISECONDS.toNanos(timeoutMs);
		this.maxConnections = maxConnections;
		this.loop = loop;
		boolean epoll = channel == EpollSocketChannel.class;
		this.bootstrap = new Bootstrap().group(loop)
			.channel(channel)
			.option(ChannelOption.TCP_NODELAY, true)
			.option(epoll ? EpollChannelOption.IP_BIND_ADDRESS_NO_PORT : ChannelOption.SO_REUSEADDR, true)
			.option(ChannelOption.CONNECT_TIMEOUT_MILLIS, (int) Math.min(timeoutMs, Integer.MAX_VALUE))
			.handler(new ChannelInitializer<SocketChannel>() {
				@Override
				protected void initChannel(SocketChannel ch) {
					ch.pipeline().addLast(new HttpResponseDecoder(), new Conn());
				}
			});
	}

	public static void main(String[] args) throws Exception {
		Map<String, String> options = new LinkedHashMap<>();
		for (String arg : args) {
			int eq = arg.indexOf('=');
			if (!arg.startsWith("--") || eq < 3) {
				throw new IllegalArgumentException("not --name=value: " + arg);
			}
			options.put(arg.substring(2, eq), arg.substring(eq + 1));
		}
		Map<String, Object> report = run(URI.create(required(options, "url")), Long.parseLong(required(options, "rate")),
				Long.parseLong(required(options, "duration-s")), Long.parseLong(options.getOrDefault("timeout-ms", "30000")),
				Integer.parseInt(options.getOrDefault("max-connections", "10000")));
		System.out.println(JsonMapper.builder().build().writeValueAsString(report));
	}

	/** RATE requests per second to URL for DURATION_S seconds, open loop; the report once all are answered. */
	static Map<String, Object> run(URI url, long rate, long durationS, long timeoutMs, int maxConnections)
			throws InterruptedException {
		warmUp();
		boolean epoll = Epoll.isAvailable();
		IoHandlerFactory io = epoll ? EpollIoHandler.newFactory() : NioIoHandler.newFactory();
		MultiThreadIoEventLoopGroup group = new MultiThreadIoEventLoopGroup(1, io);
		try {
			OpenLoopClient client = new OpenLoopClient(url, rate, durationS, timeoutMs, maxConnections, group.next(),
					epoll ? EpollSocketChannel.class : NioSocketChannel.class);
			client.loop.execute(client::begin);
			client.done.await();
			return client.loop.submit(client::report).get();
		}
		catch (java.util.concurrent.ExecutionException ex) {
			throw new IllegalStateException(ex.getCause());
		}
		finally {
			group.shutdownGracefully(0, 1, TimeUnit.SECONDS);
		}
	}

	/**
	 * The response path compiled before the first request: canned answers through the decoder, without the
	 * network, so that the first second's requests are not sent late by a cold client.
	 */
	private static void warmUp() {
		byte[] answer = ("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\ncontent-length: 2\r\n\r\n{}")
			.getBytes(StandardCharsets.US_ASCII);
		EmbeddedChannel channel = new EmbeddedChannel(new HttpResponseDecoder());
		for (int i = 0; i < 200_000; i++) {
			channel.writeInbound(Unpooled.wrappedBuffer(answer));
			Object msg;
			while ((msg = channel.readInbound()) != null) {
				ReferenceCountUtil.release(msg);
			}
		}
		channel.finishAndReleaseAll();
	}

	private static String required(Map<String, String> options, String name) {
		String value = options.get(name);
		if (value == null) {
			throw new IllegalArgumentException("--" + name + "=... is required");
		}
		return value;
	}

	private void begin() {
		this.start = System.nanoTime();
		this.loop.scheduleAtFixedRate(this::tick, 0, 1, TimeUnit.MILLISECONDS);
	}

	private long intended(long i) {
		return this.start + i * 1_000_000_000L / this.rate;
	}

	/** Every millisecond: send what is due, expire what waited too long, stop when all is answered. */
	private void tick() {
		long now = System.nanoTime();
		long due = Math.min(this.total, (now - this.start) * this.rate / 1_000_000_000L + 1);
		while (this.sent < due) {
			dispatch(intended(this.sent++), now);
		}
		while (this.pendingSize > 0 && now - this.pending[this.pendingHead] > this.timeoutNanos) {
			fail(pollPending(), now, "timeout waiting for a connection");
		}
		if (++this.ticks % 100 == 0) {
			for (Conn c : this.all.toArray(new Conn[0])) {
				if (c.intended != 0 && now - c.intended > this.timeoutNanos) {
					fail(c.intended, now, "timeout");
					c.intended = 0;
					c.ctx.close();
				}
			}
		}
		if (this.sent == this.total && this.finished == this.total) {
			this.done.countDown();
		}
	}

	private void dispatch(long intended, long now) {
		Conn c = this.idle.pollLast();
		if (c != null) {
			c.send(intended, now);
		}
		else {
			addPending(intended);
			if (this.open < this.maxConnections) {
				connect();
			}
		}
	}

	private void connect() {
		this.open++;
		this.opened++;
		InetSocketAddress source = new InetSocketAddress(SOURCES[(int) (this.opened % SOURCES.length)], 0);
		ChannelFuture f = this.bootstrap.connect(new InetSocketAddress(this.host, this.port), source);
		f.addListener((ChannelFuture future) -> {
			if (!future.isSuccess()) {
				this.open--;
				String why = String.valueOf(future.cause());
				this.errors.merge("connect: " + why.substring(0, Math.min(why.length(), 200)), 1L, Long::sum);
				if (this.pendingSize > 0) {
					fail(pollPending(), System.nanoTime(), "connect failed");
				}
			}
		});
	}

	private void answered(Conn c, int status, long now) {
		record(c.intended, now);
		this.statusCodes.merge(status, 1L, Long::sum);
		if (status >= 200 && status < 400) {
			this.successes++;
		}
		this.finished++;
		this.lastAnswer = now;
		c.intended = 0;
		if (this.pendingSize > 0) {
			c.send(pollPending(), now);
		}
		else {
			this.idle.addLast(c);
		}
	}

	private void fail(long intended, long now, String why) {
		record(intended, now);
		this.statusCodes.merge(0, 1L, Long::sum);
		this.errors.merge(why, 1L, Long::sum);
		this.finished++;
		this.lastAnswer = now;
	}

	private void record(long intended, long now) {
		long latency = Math.max(now - intended, 0);
		this.latencies.recordValue(latency);
		if (intended >= intended(this.total / 2)) {
			this.secondHalf.recordValue(latency);
		}
	}

	private void addPending(long intended) {
		if (this.pendingSize == this.pending.length) {
			long[] grown = new long[this.pending.length * 2];
			for (int i = 0; i < this.pendingSize; i++) {
				grown[i] = this.pending[(this.pendingHead + i) % this.pending.length];
			}
			this.pending = grown;
			this.pendingHead = 0;
		}
		this.pending[(this.pendingHead + this.pendingSize++) % this.pending.length] = intended;
	}

	private long pollPending() {
		long intended = this.pending[this.pendingHead];
		this.pendingHead = (this.pendingHead + 1) % this.pending.length;
		this.pendingSize--;
		return intended;
	}

	private Map<String, Object> report() {
		Map<String, Object> lat = new LinkedHashMap<>();
		long n = this.latencies.getTotalCount();
		lat.put("total", (long) (this.latencies.getMean() * n));
		lat.put("mean", (long) this.latencies.getMean());
		for (int p : new int[] { 50, 90, 95, 99 }) {
			lat.put(p + "th", this.latencies.getValueAtPercentile(p));
		}
		lat.put("max", this.latencies.getMaxValue());
		lat.put("min", this.latencies.getMinValue());
		long duration = intended(this.total - 1) - this.start;
		Map<String, Object> r = new LinkedHashMap<>();
		r.put("latencies", lat);
		r.put("latencies_second_half", Map.of("50th", this.secondHalf.getValueAtPercentile(50), "99th",
				this.secondHalf.getValueAtPercentile(99), "count", this.secondHalf.getTotalCount()));
		r.put("duration", duration);
		r.put("wait", Math.max(this.lastAnswer - intended(this.total - 1), 0));
		r.put("requests", this.total);
		r.put("rate", this.total * 1e9 / Math.max(duration, 1));
		r.put("success", (double) this.successes / Math.max(this.total, 1));
		Map<String, Long> codes = new LinkedHashMap<>();
		this.statusCodes.forEach((code, count) -> codes.put(String.valueOf(code), count));
		r.put("status_codes", codes);
		r.put("errors", this.errors.keySet().stream().toList());
		r.put("error_counts", this.errors);
		r.put("connections_opened", this.opened);
		r.put("send_lag_99th", this.sendLag.getValueAtPercentile(99));
		r.put("send_lag_max", this.sendLag.getMaxValue());
		return r;
	}

	/** One connection: at most one request in flight, its intended time (0: none). */
	private final class Conn extends ChannelInboundHandlerAdapter {

		private ChannelHandlerContext ctx;

		private long intended;

		private int status;

		void send(long intended, long now) {
			this.intended = intended;
			OpenLoopClient.this.sendLag.recordValue(Math.max(now - intended, 0));
			this.ctx.writeAndFlush(OpenLoopClient.this.request.retainedDuplicate(), this.ctx.voidPromise());
		}

		@Override
		public void channelActive(ChannelHandlerContext ctx) {
			this.ctx = ctx;
			OpenLoopClient.this.all.add(this);
			long now = System.nanoTime();
			if (OpenLoopClient.this.pendingSize > 0) {
				send(pollPending(), now);
			}
			else {
				OpenLoopClient.this.idle.addLast(this);
			}
		}

		@Override
		public void channelRead(ChannelHandlerContext ctx, Object msg) {
			try {
				if (msg instanceof HttpResponse response) {
					this.status = response.status().code();
				}
				if (msg instanceof LastHttpContent && this.intended != 0) {
					answered(this, this.status, System.nanoTime());
				}
			}
			finally {
				ReferenceCountUtil.release(msg);
			}
		}

		@Override
		public void channelInactive(ChannelHandlerContext ctx) {
			OpenLoopClient.this.open--;
			OpenLoopClient.this.idle.remove(this);
			OpenLoopClient.this.all.remove(this);
			if (this.intended != 0) {
				fail(this.intended, System.nanoTime(), "connection closed");
				this.intended = 0;
			}
			if (OpenLoopClient.this.pendingSize > 0 && OpenLoopClient.this.open < OpenLoopClient.this.maxConnections) {
				connect();
			}
		}

		@Override
		public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
			ctx.close();
		}

	}

}

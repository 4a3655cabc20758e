#!/usr/bin/perl
# Net::SIP (libnet-sip-perl) as a calling interop peer: INVITE a target, send PCMU from a raw
# file (looped) while saving every received PCMU payload to another raw file, hang up with BYE
# after --seconds (or stop when the far end sends BYE). Progress goes to stdout as JSON lines:
#   {"event":"ready"} {"event":"established"} {"event":"failed","code":486}
#   {"event":"dtmf","digit":"5","duration":100} (RFC 4733 events received) {"event":"dtmf-sent"}
#   {"event":"reinvite","status":"OK","code":200} (--reinvite-at; --hold puts the far end on hold)
#   {"event":"peer-bye"} {"event":"bye","code":200} {"event":"done","packets":N,"bytes":N}
# Exit status 0 when the call was established and ended cleanly.
#
# usage: netsip-call.pl --local 127.0.0.1:PORT --to sip:echo@127.0.0.1:5060 \
#          --send tone.pcmu --recv heard.pcmu [--seconds 3] [--ring 10] [--from URI]
#          [--dtmf DIGITS [--dtmf-at SECONDS]] [--reinvite-at SECONDS [--hold]] [--user NAME --password SECRET] [--debug N]
use strict;
use warnings;
use Getopt::Long qw(:config posix_default);
use IO::Handle;
use JSON::PP;
use Net::SIP;
use Net::SIP::Debug;

STDOUT->autoflush(1);
my %o = (seconds => 3, ring => 10, 'dtmf-at' => 0.5);
GetOptions(\%o, 'local=s', 'to=s', 'from=s', 'send=s', 'recv=s', 'seconds=f', 'ring=f',
    'dtmf=s', 'dtmf-at=f', 'reinvite-at=f', 'hold', 'user=s', 'password=s', 'debug=i') or die "bad options\n";
defined $o{$_} or die "--$_ is required\n" for qw(local to send recv);
Net::SIP::Debug->level($o{debug}) if $o{debug};
my $json = JSON::PP->new->canonical;
sub emit { print $json->encode({@_}), "\n" }

my ($host) = $o{local} =~ m{^([^:]+)};
my $ua = Net::SIP::Simple->new(
    from => $o{from} || "sip:netsip\@$o{local}",
    leg  => $o{local},
    $o{user} ? (auth => [$o{user}, $o{password}]) : (),
);
emit(event => 'ready');

my ($peer_bye, $packets, $bytes) = (0, 0, 0);
open(my $rec, '>', $o{recv}) or die "cannot write $o{recv}: $!\n";
binmode $rec;
my $call = $ua->invite($o{to},
    # loop the file (repeat -1) for as long as the call lasts; count and save what comes back
    init_media => $ua->rtp('send_recv', $o{send}, -1, sub {
        my ($payload) = @_;
        $packets++;
        $bytes += length $payload;
        syswrite($rec, $payload);
    }),
    cb_rtp_done => sub {},    # the default would send BYE when the file ends
    recv_bye  => sub { $peer_bye = 1; emit(event => 'peer-bye') },
    # RFC 4733 only: with 'audio' too Net::SIP would also look for in-band tones in our echo
    dtmf_methods => 'rfc2833',
    cb_dtmf   => sub { my ($digit, $duration) = @_; emit(event => 'dtmf', digit => "$digit", duration => 0 + $duration) },
    ring_time => $o{ring},
);
if (!$call || $call->error) {
    my $code = ($call && $call->error) || $ua->error || 'unknown';
    emit(event => 'failed', code => ($code =~ /(\d{3})/ ? 0 + $1 : undef), error => "$code");
    exit 2;
}
emit(event => 'established');

if (defined $o{dtmf} && length $o{dtmf}) {
    $ua->add_timer($o{'dtmf-at'}, sub {
        $call->dtmf($o{dtmf}, methods => 'rfc2833', duration => 100, cb_final => sub { emit(event => 'dtmf-sent') });
    });
}

if (defined $o{'reinvite-at'}) {
    $ua->add_timer($o{'reinvite-at'}, sub {
        $call->reinvite(
            $o{hold} ? (call_on_hold => 1) : (),
            cb_final => sub {
                my ($status, $self, %info) = @_;
                my $code = $info{code} || ($info{packet} && $info{packet}->code) || undef;
                emit(event => 'reinvite', status => $status, code => $code ? 0 + $code : undef);
            },
        );
    });
}

# Let media flow; stop early if the far end hangs up.
$ua->loop($o{seconds}, \$peer_bye);

my $exit = 0;
if (!$peer_bye) {
    my ($bye_done, $bye_code);
    # Simple::Call::bye does not report the status: send the BYE through the endpoint ourselves.
    $call->{endpoint}->new_request('BYE', $call->{ctx}, sub {
        my ($endpoint, $ctx, $errno, $code) = @_;
        return if $code && $code =~ /^1\d\d$/;
        $bye_code = $code || 0;
        $bye_done = 1;
        $call->cleanup;
    });
    $ua->loop(5, \$bye_done);
    emit(event => 'bye', code => $bye_code);
    $exit = 3 unless $bye_code && $bye_code =~ /^2\d\d$/;
}
close $rec;
emit(event => 'done', packets => $packets, bytes => $bytes);
$ua->cleanup;
exit $exit;

#!/usr/bin/perl
# Net::SIP (libnet-sip-perl) as an answering interop peer: listen on --local, answer the first
# INVITE (200 OK with PCMU), send PCMU from a raw file (looped), save received PCMU payloads
# to a raw file, and exit once the caller sends BYE (or after --max seconds). Optionally hang up
# itself after --hangup seconds. JSON lines on stdout:
#   {"event":"ready"} {"event":"invite","from":"..."} {"event":"established"}
#   {"event":"peer-bye"} {"event":"bye"} {"event":"done","packets":N,"bytes":N}
#
# usage: netsip-answer.pl --local 127.0.0.1:PORT --send tone.pcmu --recv heard.pcmu
#          [--max 20] [--hangup SECONDS] [--debug N]
use strict;
use warnings;
use Getopt::Long qw(:config posix_default);
use IO::Handle;
use JSON::PP;
use Net::SIP;
use Net::SIP::Debug;

STDOUT->autoflush(1);
my %o = (max => 20);
GetOptions(\%o, 'local=s', 'send=s', 'recv=s', 'max=f', 'hangup=f', 'debug=i') or die "bad options\n";
defined $o{$_} or die "--$_ is required\n" for qw(local send recv);
Net::SIP::Debug->level($o{debug}) if $o{debug};
my $json = JSON::PP->new->canonical;
sub emit { print $json->encode({@_}), "\n" }

my $ua = Net::SIP::Simple->new(from => "sip:netsip\@$o{local}", leg => $o{local});
my ($done, $packets, $bytes, $call) = (0, 0, 0);
open(my $rec, '>', $o{recv}) or die "cannot write $o{recv}: $!\n";
binmode $rec;
$ua->listen(
    cb_create => sub {
        my ($c, $request, $leg, $from) = @_;
        return 0 if $call;    # one call only
        $call = $c;
        emit(event => 'invite', from => scalar($request->get_header('from')));
        return 1;
    },
    init_media => $ua->rtp('send_recv', $o{send}, -1, sub {
        my ($payload) = @_;
        $packets++;
        $bytes += length $payload;
        syswrite($rec, $payload);
    }),
    cb_rtp_done => sub {},    # the default would send BYE when the file ends
    cb_established => sub {
        emit(event => 'established');
        if ($o{hangup}) {
            $ua->add_timer($o{hangup}, sub {
                emit(event => 'bye');
                $call->bye(cb_final => sub { $done = 1 });
            });
        }
    },
    recv_bye => sub { emit(event => 'peer-bye'); $done = 1 },
);
emit(event => 'ready');
$ua->loop($o{max}, \$done);
# give the 200 to the BYE a moment to leave
$ua->loop(0.2);
close $rec;
emit(event => 'done', packets => $packets, bytes => $bytes);
$ua->cleanup;
exit($done ? 0 : 4);
